// Command hello is the benchmark target: a net/http server on 127.0.0.1
// answering every request with "hello\n" (Content-Length 6). It prints its
// URL on stdout and serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("hello: %v", err)
	}
	fmt.Fprintf(os.Stdout, "http://%s/\n", ln.Addr())
	body := []byte("hello\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "6")
		w.Write(body)
	})
	log.Fatal(http.Serve(ln, h))
}
