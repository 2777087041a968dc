package rundir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/schedscope/schedscope/collect/load"
)

var someRequests = []load.RequestRecord{
	{Seq: 1, IntendedUnixNs: 1_700_000_000_000_000_000, SentUnixNs: 1_700_000_000_000_050_000, LatencyNs: 3_000_000, Status: 200, Outcome: load.OutcomeOK},
	{Seq: 2, IntendedUnixNs: 1_700_000_000_010_000_000, SentUnixNs: 1_700_000_000_010_020_000, LatencyNs: 10_000_000_000, Status: 0, Outcome: load.OutcomeTimeout},
	{Seq: 1<<64 - 1, IntendedUnixNs: -1, SentUnixNs: 0, LatencyNs: 0, Status: 503, Outcome: load.OutcomeStatus},
}

// requestsFile is requests.tsv's bytes for tag and rows.
func requestsFile(t testing.TB, tag string, rows []load.RequestRecord) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteRequests(&b, tag, rows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// requests.tsv is written as documented and read back whole.
func TestRequestsRoundTrip(t *testing.T) {
	data := requestsFile(t, "run_1.x", someRequests)
	want := "# schedscope requests tag=run_1.x\n" +
		"seq\tintended_unix_ns\tsent_unix_ns\tlatency_ns\tstatus\toutcome\n" +
		"1\t1700000000000000000\t1700000000000050000\t3000000\t200\tok\n" +
		"2\t1700000000010000000\t1700000000010020000\t10000000000\t0\ttimeout\n" +
		"18446744073709551615\t-1\t0\t0\t503\tstatus\n"
	if string(data) != want {
		t.Fatalf("requests.tsv:\n%s\nwant:\n%s", data, want)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RequestsFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	rl, err := ReadRequests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rl.Tag != "run_1.x" || rl.Skipped != 0 || rl.Truncated || !slices.Equal(rl.Requests, someRequests) {
		t.Errorf("read back %+v", rl)
	}
	if err := WriteRequests(&bytes.Buffer{}, "a-b", nil); err == nil {
		t.Error("WriteRequests took a tag with '-'")
	}
	if err := WriteRequests(&bytes.Buffer{}, "a", []load.RequestRecord{{Seq: 1, Outcome: 9}}); err == nil {
		t.Error("WriteRequests wrote an unknown outcome")
	}
}

// A missing file is fs.ErrNotExist; a file whose header is not requests.tsv's
// is an error; malformed rows are skipped and counted, the rows around them
// kept.
func TestReadRequestsMalformed(t *testing.T) {
	head := "# schedscope requests tag=t1\nseq\tintended_unix_ns\tsent_unix_ns\tlatency_ns\tstatus\toutcome\n"
	good := "7\t100\t101\t5\t200\tok\n"
	for _, tc := range []struct {
		name     string
		data     string
		rows     int
		skipped  int
		errorHas string
	}{
		{"empty", "", 0, 0, "line 1"},
		{"another file", "{\"schema\": 3}\n", 0, 0, "line 1"},
		{"header without a tag", "# schedscope requests tag=\n", 0, 0, "line 1"},
		{"header with a bad tag", "# schedscope requests tag=a b\n", 0, 0, "line 1"},
		{"no column line", "# schedscope requests tag=t1\n", 0, 0, "line 2"},
		{"other columns", "# schedscope requests tag=t1\nseq\tstatus\n", 0, 0, "line 2"},
		{"header only", head, 0, 0, ""},
		{"good rows", head + good + good, 2, 0, ""},
		{"blank lines are no loss", head + good + "\n  \n" + good, 2, 0, ""},
		{"cut last row that parses", head + good + strings.TrimSuffix(good, "\n"), 2, 0, ""},
		{"cut last row that does not", head + good + "7\t100\t1", 1, 1, ""},
		{"too few fields", head + "7\t100\t101\t5\t200\n" + good, 1, 1, ""},
		{"too many fields", head + "7\t100\t101\t5\t200\tok\tx\n" + good, 1, 1, ""},
		{"seq 0", head + "0\t100\t101\t5\t200\tok\n" + good, 1, 1, ""},
		{"negative seq", head + "-7\t100\t101\t5\t200\tok\n" + good, 1, 1, ""},
		{"seq past uint64", head + "18446744073709551616\t100\t101\t5\t200\tok\n" + good, 1, 1, ""},
		{"intended not a number", head + "7\tsoon\t101\t5\t200\tok\n" + good, 1, 1, ""},
		{"negative latency", head + "7\t100\t101\t-5\t200\tok\n" + good, 1, 1, ""},
		{"status 1000", head + "7\t100\t101\t5\t1000\tok\n" + good, 1, 1, ""},
		{"status 99999", head + "7\t100\t101\t5\t99999\tok\n" + good, 1, 1, ""},
		{"unknown outcome", head + "7\t100\t101\t5\t200\tfine\n" + good, 1, 1, ""},
		{"CRLF", head + "7\t100\t101\t5\t200\tok\r\n" + good, 1, 1, ""},
		{"spaces instead of tabs", head + "7 100 101 5 200 ok\n" + good, 1, 1, ""},
		{"line over 256 bytes", head + good + strings.Repeat("9", 300) + "\n" + good, 2, 1, ""},
		{"line over 256 bytes, last, cut", head + good + strings.Repeat("\t", 300), 1, 1, ""},
		{"binary garbage", head + "\x00\xff\t\x01\n" + good, 1, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, RequestsFile), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			rl, err := ReadRequests(dir)
			if tc.errorHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errorHas) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want a one-line error about %s", err, tc.errorHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rl.Tag != "t1" || len(rl.Requests) != tc.rows || rl.Skipped != tc.skipped {
				t.Errorf("tag %q, %d rows, %d skipped; want t1, %d rows, %d skipped", rl.Tag, len(rl.Requests), rl.Skipped, tc.rows, tc.skipped)
			}
		})
	}
	if _, err := ReadRequests(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no requests.tsv: err %v, want fs.ErrNotExist", err)
	}
}

// At most maxRows rows are read; Truncated says there were more.
func TestReadRequestsBounded(t *testing.T) {
	data := requestsFile(t, "t", someRequests)
	data = append(data, "not a row\n"...)
	for _, tc := range []struct {
		max, rows, skipped int
		truncated          bool
	}{{2, 2, 0, true}, {3, 3, 0, true}, {4, 3, 1, false}} {
		rl, err := readRequests(bytes.NewReader(data), tc.max)
		if err != nil || len(rl.Requests) != tc.rows || rl.Skipped != tc.skipped || rl.Truncated != tc.truncated {
			t.Errorf("at most %d rows: %d rows, %d skipped, truncated %v, err %v; want %d, %d, %v",
				tc.max, len(rl.Requests), rl.Skipped, rl.Truncated, err, tc.rows, tc.skipped, tc.truncated)
		}
	}
}

// FuzzReadRequests feeds arbitrary bytes to the reader: it never panics,
// reads no more than its bound, keeps only valid rows, and what it keeps
// is written and read back the same.
func FuzzReadRequests(f *testing.F) {
	f.Add(requestsFile(f, "seed", someRequests))
	f.Add([]byte("# schedscope requests tag=t\nseq\tintended_unix_ns\tsent_unix_ns\tlatency_ns\tstatus\toutcome\n1\t2\t3\t4\t5\tother\n\t\t\t\t\t\n"))
	f.Add([]byte("# schedscope requests tag=t\nseq\tintended_unix_ns\tsent_unix_ns\tlatency_ns\tstatus\toutcome\n" + strings.Repeat("1", 400)))
	f.Add([]byte("# schedscope requests tag=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 50
		rl, err := readRequests(bytes.NewReader(data), max)
		if err != nil {
			return
		}
		if load.CheckRequestTag(rl.Tag) != nil || len(rl.Requests)+rl.Skipped > max {
			t.Fatalf("tag %q, %d rows and %d skipped (at most %d)", rl.Tag, len(rl.Requests), rl.Skipped, max)
		}
		for _, q := range rl.Requests {
			if q.Seq == 0 || q.LatencyNs < 0 || q.Status < 0 || q.Status > 999 || q.Outcome > load.OutcomeOther {
				t.Fatalf("invalid row kept: %+v", q)
			}
		}
		back, err := readRequests(bytes.NewReader(requestsFile(t, rl.Tag, rl.Requests)), max)
		if err != nil || back.Skipped != 0 || !slices.Equal(back.Requests, rl.Requests) {
			t.Fatalf("rows written again read back differently: %v, %d skipped", err, back.Skipped)
		}
	})
}
