module github.com/schedscope/schedscope/bench/fastclient

go 1.26.8

require github.com/valyala/fasthttp v1.58.0

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/klauspost/compress v1.17.11 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
