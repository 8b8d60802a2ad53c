// cdicheck loads a CDI spec directory with the reference CDI Go library (the code that
// containerd, CRI-O and podman embed) and checks what k8s-rdma-shared-dp wrote and handed
// out, as a container runtime would:
//
//	cdicheck -dir DIR [-devices N] [-annotation KEY=VALUE]... [-oci-spec FILE] [QUALIFIED-NAME]...
//
// Every spec must load without an error; with -devices, the directory must declare exactly
// N devices; every name given, and every name in the annotations (parsed with the
// library's own annotation parser), must resolve and be injected into an OCI spec. A panic
// inside the library is a failure too. Prints one line per problem and exits 1, or prints
// a summary, the injected process environment ("env: NAME=value" lines) and mounts
// ("mount: DEST <- SOURCE OPTIONS") and hooks ("hook: STAGE PATH ARGS") and exits 0.
// With -oci-spec, the devices are injected into that OCI spec (a bundle's config.json, as
// a runtime would before runc starts the container) and the file is rewritten with them.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/container-orchestrated-devices/container-device-interface/pkg/cdi"
	oci "github.com/opencontainers/runtime-spec/specs-go"
)

type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	dir := flag.String("dir", "", "CDI spec directory")
	devices := flag.Int("devices", -1, "exact number of devices the directory must declare")
	var annotations repeated
	flag.Var(&annotations, "annotation", "KEY=VALUE annotation from an AllocateResponse")
	ociSpec := flag.String("oci-spec", "", "OCI spec file to inject into and rewrite")
	flag.Parse()
	os.Exit(check(*dir, *devices, annotations, *ociSpec, flag.Args()))
}

func check(dir string, wantDevices int, annotations []string, ociSpec string, names []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Printf("panic inside the CDI library: %v\n", r)
			code = 1
		}
	}()
	problems := 0
	fail := func(format string, args ...interface{}) {
		fmt.Printf(format+"\n", args...)
		problems++
	}
	cache, err := cdi.NewCache(cdi.WithSpecDirs(dir), cdi.WithAutoRefresh(false))
	if err != nil {
		fail("loading %s: %v", dir, err)
	}
	if cache == nil {
		return 1
	}
	for path, errs := range cache.GetErrors() {
		for _, e := range errs {
			fail("spec error in %s: %v", path, e)
		}
	}
	declared := cache.ListDevices()
	sort.Strings(declared)
	if wantDevices >= 0 && len(declared) != wantDevices {
		fail("%d device(s) declared, want %d: %v", len(declared), wantDevices, declared)
	}
	if len(annotations) > 0 {
		parsed := map[string]string{}
		for _, a := range annotations {
			key, value, ok := strings.Cut(a, "=")
			if !ok {
				fail("annotation %q is not KEY=VALUE", a)
				continue
			}
			parsed[key] = value
		}
		_, fromAnnotations, err := cdi.ParseAnnotations(parsed)
		if err != nil {
			fail("annotations rejected by the library: %v", err)
		}
		names = append(names, fromAnnotations...)
	}
	injected := 0
	var envs, mounts, hooks []string
	if len(names) > 0 {
		spec := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
		if ociSpec != "" {
			text, err := os.ReadFile(ociSpec)
			if err == nil {
				err = json.Unmarshal(text, spec)
			}
			if err != nil {
				fail("reading %s: %v", ociSpec, err)
				return 1
			}
		}
		unresolved, err := cache.InjectDevices(spec, names...)
		if err != nil {
			fail("injecting %v: %v (unresolved: %v)", names, err, unresolved)
		}
		if ociSpec != "" && err == nil {
			text, err := json.MarshalIndent(spec, "", "  ")
			if err == nil {
				err = os.WriteFile(ociSpec, text, 0o644)
			}
			if err != nil {
				fail("writing %s: %v", ociSpec, err)
			}
		}
		if spec.Hooks != nil {
			for _, h := range spec.Hooks.CreateRuntime {
				hooks = append(hooks, fmt.Sprintf("createRuntime %s %s", h.Path, strings.Join(h.Args, " ")))
			}
		}
		injected = len(spec.Linux.Devices)
		envs = spec.Process.Env
		for _, m := range spec.Mounts {
			mounts = append(mounts, fmt.Sprintf("%s <- %s %s", m.Destination, m.Source, strings.Join(m.Options, ",")))
		}
	}
	if problems > 0 {
		return 1
	}
	fmt.Printf("ok: %d device(s) declared, %d name(s) resolved, %d device node(s) injected\n",
		len(declared), len(names), injected)
	for _, e := range envs {
		fmt.Printf("env: %s\n", e)
	}
	for _, m := range mounts {
		fmt.Printf("mount: %s\n", m)
	}
	for _, h := range hooks {
		fmt.Printf("hook: %s\n", h)
	}
	return 0
}
