// promcheck fetches a /metrics page and parses it with Prometheus's own text-format parser
// (github.com/prometheus/common/expfmt, from Debian), as a Prometheus server would:
//
//	promcheck URL [FAMILY]...
//
// Fails (exit 1, one line per problem) if the page does not parse, a sample has a
// non-finite value where a counter is expected, or a FAMILY given is missing.
package main

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: promcheck URL [FAMILY]...")
		os.Exit(2)
	}
	resp, err := http.Get(os.Args[1])
	if err != nil {
		fmt.Printf("GET %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	var parser expfmt.TextParser
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		fmt.Printf("not valid Prometheus text format: %v\n", err)
		os.Exit(1)
	}
	problems := 0
	for _, want := range os.Args[2:] {
		if _, ok := families[want]; !ok {
			fmt.Printf("family %s missing\n", want)
			problems++
		}
	}
	samples := 0
	for name, f := range families {
		for _, m := range f.Metric {
			samples++
			if f.GetType() == dto.MetricType_COUNTER {
				if v := m.GetCounter().GetValue(); math.IsNaN(v) || v < 0 {
					fmt.Printf("counter %s has value %v\n", name, v)
					problems++
				}
			}
		}
	}
	if problems > 0 {
		os.Exit(1)
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Printf("ok: %d families, %d samples\n", len(families), samples)
}
