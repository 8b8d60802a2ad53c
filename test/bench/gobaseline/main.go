// A bare Go gRPC server for the benchmarks' same-run baseline: what grpc-go costs on its
// own, as the Go device plugin uses it. It listens on N unix sockets (DIR/go-<i>.sock) and
// answers every unary call of any service with an empty message (an empty AllocateResponse,
// on the wire), without generated code: a pass-through codec and an unknown-service
// handler. It exits on SIGTERM.
//
//	gobaseline DIR N
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"google.golang.org/grpc"
)

// rawCodec passes message bytes through untouched.
type rawCodec struct{}

func (rawCodec) Marshal(v interface{}) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v interface{}) error {
	*(v.(*[]byte)) = append((*(v.(*[]byte)))[:0], data...)
	return nil
}
func (rawCodec) Name() string   { return "proto" }
func (rawCodec) String() string { return "proto" }

func answerEmpty(_ interface{}, stream grpc.ServerStream) error {
	var request []byte
	if err := stream.RecvMsg(&request); err != nil {
		return err
	}
	empty := []byte{}
	return stream.SendMsg(&empty)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gobaseline DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "N:", err)
		os.Exit(2)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM)
	var servers []*grpc.Server
	for i := 0; i < n; i++ {
		path := filepath.Join(os.Args[1], fmt.Sprintf("go-%d.sock", i))
		os.Remove(path)
		lis, err := net.Listen("unix", path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s := grpc.NewServer(grpc.CustomCodec(rawCodec{}), grpc.UnknownServiceHandler(answerEmpty))
		servers = append(servers, s)
		go s.Serve(lis)
	}
	<-stop
	for _, s := range servers {
		s.Stop()
	}
}
