package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/regular"
)

// Bounds of the command line that are not a library's.
const (
	// maxProcs bounds --procs: each P costs the runtime some tens of KiB
	// (--procs 100000 took 2.15 GB), and a generator gains nothing from
	// more Ps than the machine has CPUs.
	maxProcs = 1024
	// maxBodyFile is the largest --body @FILE, load.MaxBody.
	maxBodyFile = load.MaxBody
	// maxTop bounds analyze's --top, rows per table.
	maxTop = 10_000
	// maxAnalyzeSpan bounds analyze's --sleep and --pin-threshold.
	maxAnalyzeSpan = time.Hour
	// minCapture and maxCapture bound run's --max-capture.
	minCapture = 1 << 20
	maxCapture = 64 << 30
)

// readBodyFile reads --body @name: a regular file of at most maxBodyFile
// bytes (not a device or a pipe, which may not end).
func readBodyFile(name string) ([]byte, error) { return readRegularFile(name, maxBodyFile) }

// readRegularFile reads name, a regular file of at most limit bytes: not a
// device or a pipe, which may never end (or, opened, never start).
func readRegularFile(name string, limit int64) ([]byte, error) {
	return regular.ReadAtMost(name, limit)
}

// byteSize is a flag holding a size in bytes, written as a number with an
// optional binary unit: 512, 64KiB, 16MiB, 1GiB (KB, MB, GB are taken as
// the binary units too).
type byteSize int64

func (b *byteSize) String() string { return regular.FormatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("%q: want a size such as 512MiB or 1GiB", s)
	}
	*b = byteSize(n * mult)
	return nil
}
