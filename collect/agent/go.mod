module github.com/schedscope/schedscope/collect/agent

go 1.25

require (
	github.com/felixge/fgprof v0.9.5
	go.uber.org/goleak v1.3.0
)

require github.com/google/pprof v0.0.0-20240227163752-401108e1b7e7 // indirect
