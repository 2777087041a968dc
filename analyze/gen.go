package analyze

// The test traces under testdata/go1.NN are written by programs in
// testdata (see testdata/README.md). Regenerate with `go generate ./analyze`
// (cgo.trace needs a C compiler).
//go:generate go run ./testdata/gen_scenarios.go -scenario locked -o testdata/go1.26/locked.trace
//go:generate go run ./testdata/gen_scenarios.go -scenario sleep -o testdata/go1.26/sleep.trace
//go:generate go run ./testdata/gen_scenarios.go -scenario syscall -o testdata/go1.26/syscall.trace
//go:generate env GODEBUG=traceadvanceperiod=50000000 go run ./testdata/gen_scenarios.go -scenario mixed -o testdata/go1.26/mixed.trace
//go:generate go run ./testdata/gen_cgo.go -o testdata/go1.26/cgo.trace
