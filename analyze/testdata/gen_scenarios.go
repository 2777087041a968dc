//go:build ignore

// gen_scenarios writes execution traces with known answers for the analyze
// tests. Run through `go generate ./analyze` (see analyze/gen.go); each
// scenario's known answers are listed beside it and asserted in
// analyze/scenarios_test.go.
//
//	go run ./testdata/gen_scenarios.go -scenario locked -o testdata/go1.26/locked.trace
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"
	rtrace "runtime/trace"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	scenario := flag.String("scenario", "", "locked, sleep, syscall or mixed")
	out := flag.String("o", "", "trace file to write")
	flag.Parse()
	run, ok := map[string]func(){
		"locked":  locked,
		"sleep":   sleeps,
		"syscall": syscalls,
		"mixed":   mixed,
	}[*scenario]
	if !ok || *out == "" {
		log.Fatalf("usage: gen_scenarios -scenario locked|sleep|syscall|mixed -o FILE")
	}
	runtime.GOMAXPROCS(2)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := rtrace.Start(f); err != nil {
		log.Fatal(err)
	}
	run()
	rtrace.Stop()
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// burn does a fixed amount of CPU work.
func burn(rounds int) {
	var h [32]byte
	for i := 0; i < rounds; i++ {
		h = sha256.Sum256(h[:])
	}
	sink = h[0]
}

var sink byte

// hogs runs n CPU-bound goroutines until stop is closed.
func hogs(n int, stop chan struct{}, wg *sync.WaitGroup) {
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					burn(2000)
				}
			}
		}()
	}
}

// Known answers (locked): exactly 3 locked goroutines, start function
// main.lockedWorker, each with 6 wake-ups; each blocks 5 times for ~30 ms
// or more (pinned events of kind "locked"). main.lockedShort is locked too
// but only ever blocks ~1 ms (no pinned events). main.unlockedWorker (4 of
// them) does the same as lockedWorker without LockOSThread: never locked.
// main.lockedOnce (2) locks, writes the schedscope.lockosthread annotation,
// waits once ~30 ms and unlocks: locked (annotated), one locked span each.
// main.lockedOnceBare does the same without the annotation: one wait, so
// only the P hand-off into its thread can show the lock (evidence
// "hand-off"; it does in the committed trace, but not in every run).
// One CPU hog keeps a P busy so threads are shared.
func locked() {
	stop := make(chan struct{})
	var hwg sync.WaitGroup
	hogs(1, stop, &hwg)
	var wg sync.WaitGroup
	tick := func(period time.Duration, n int) []chan struct{} {
		chs := make([]chan struct{}, n)
		for i := range chs {
			chs[i] = make(chan struct{})
		}
		go func() {
			for k := 0; k < 6; k++ {
				time.Sleep(period)
				for _, c := range chs {
					c <- struct{}{}
				}
			}
			for _, c := range chs {
				close(c)
			}
		}()
		return chs
	}
	for _, c := range tick(30*time.Millisecond, 3) {
		wg.Add(1)
		go lockedWorker(c, &wg)
	}
	for _, c := range tick(time.Millisecond, 1) {
		wg.Add(1)
		go lockedShort(c, &wg)
	}
	for _, c := range tick(30*time.Millisecond, 4) {
		wg.Add(1)
		go unlockedWorker(c, &wg)
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go lockedOnce(&wg)
	}
	wg.Add(1)
	go lockedOnceBare(&wg)
	wg.Wait()
	close(stop)
	hwg.Wait()
}

func lockedWorker(c chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range c {
		burn(200)
	}
}

func lockedShort(c chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range c {
		burn(200)
	}
}

func lockedOnce(wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	rtrace.Log(context.Background(), "schedscope.lockosthread", "lock")
	time.Sleep(30 * time.Millisecond)
	rtrace.Log(context.Background(), "schedscope.lockosthread", "unlock")
	runtime.UnlockOSThread()
}

func lockedOnceBare(wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	time.Sleep(30 * time.Millisecond)
	runtime.UnlockOSThread()
}

func unlockedWorker(c chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for range c {
		burn(200)
	}
}

// sleepAnnotated sleeps d after writing schedscope's sleep annotation.
func sleepAnnotated(d time.Duration) {
	rtrace.Log(context.Background(), "schedscope.sleep", strconv.FormatInt(d.Nanoseconds(), 10))
	time.Sleep(d)
}

// Known answers (sleep): site main.sleeper10 sleeps 10 ms 4x10 times with
// the annotation (requested_ns 10000000); site main.sleeper3 sleeps 3 ms
// 2x10 times without it (requested_ns 0, no overshoot). One CPU hog keeps
// a P busy so post-wake delays are non-zero.
func sleeps() {
	stop := make(chan struct{})
	var hwg sync.WaitGroup
	hogs(1, stop, &hwg)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go sleeper10(&wg)
	}
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go sleeper3(&wg)
	}
	wg.Wait()
	close(stop)
	hwg.Wait()
}

func sleeper10(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 10; i++ {
		sleepAnnotated(10 * time.Millisecond)
	}
}

func sleeper3(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < 10; i++ {
		time.Sleep(3 * time.Millisecond)
	}
}

// Known answers (syscall): main.slowRead blocks in read(2) on a pipe 3
// times for ~40 ms (pinned events of kind "syscall", at least 40 ms);
// main.fastRead does 200 reads that find data waiting (all far below the
// threshold, no pinned events).
func syscalls() {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		log.Fatal(err)
	}
	// The writer writes one byte 40 ms after each read returned, so each
	// of the 3 reads blocks however late the writer runs.
	done, ack := make(chan struct{}), make(chan struct{})
	go func() {
		for i := 0; i < 3; i++ {
			time.Sleep(40 * time.Millisecond)
			syscall.Write(p[1], []byte{1})
			<-ack
		}
		close(done)
	}()
	slowRead(p[0], 3, ack)
	<-done

	var q [2]int
	if err := syscall.Pipe(q[:]); err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		syscall.Write(q[1], []byte{1})
		fastRead(q[0])
	}
	syscall.Close(p[0])
	syscall.Close(p[1])
	syscall.Close(q[0])
	syscall.Close(q[1])
}

func slowRead(fd, n int, ack chan<- struct{}) {
	buf := make([]byte, 1)
	for i := 0; i < n; i++ {
		if _, err := syscall.Read(fd, buf); err != nil {
			log.Fatal(err)
		}
		ack <- struct{}{}
	}
}

func fastRead(fd int) {
	buf := make([]byte, 1)
	if _, err := syscall.Read(fd, buf); err != nil {
		log.Fatal(err)
	}
}

// mixed exercises every compat profile: CPU hogs (preemption), channel
// ping-pong, mutex contention, select, loopback TCP (network waits),
// sleeps and syscalls, for about 300 ms.
func mixed() {
	stop := make(chan struct{})
	var hwg sync.WaitGroup
	hogs(3, stop, &hwg)
	var wg sync.WaitGroup

	// chan ping-pong
	ping, pong := make(chan int), make(chan int)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 2000; i++ {
			ping <- i
			<-pong
		}
		close(ping)
	}()
	go func() {
		defer wg.Done()
		for v := range ping {
			pong <- v
		}
	}()

	// mutex contention
	var mu sync.Mutex
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				mu.Lock()
				burn(50)
				mu.Unlock()
			}
		}()
	}

	// select with a timeout
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := make(chan int)
		for j := 0; j < 20; j++ {
			select {
			case <-c:
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	// loopback TCP echo
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(conn, conn)
		conn.Close()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			log.Fatal(err)
		}
		buf := make([]byte, 64)
		for j := 0; j < 300; j++ {
			if _, err := conn.Write(buf); err != nil {
				log.Fatal(err)
			}
			if _, err := io.ReadFull(conn, buf); err != nil {
				log.Fatal(err)
			}
		}
		conn.Close()
	}()

	// sleeps
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				sleepAnnotated(5 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	ln.Close()
	close(stop)
	hwg.Wait()
	fmt.Fprintln(io.Discard)
}
