package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/regular"
)

// requests.tsv's first two lines: the run's tag, then the column names.
const (
	requestsHeader  = "# schedscope requests tag="
	requestsColumns = "seq\tintended_unix_ns\tsent_unix_ns\tlatency_ns\tstatus\toutcome"
)

// MaxRequestsLine is the longest requests.tsv line ReadRequests parses, in
// bytes; a longer one is skipped (a row is about 70 bytes).
const MaxRequestsLine = 256

// RequestLog is requests.tsv read back: the load generator's record of each
// request of the run around its trace capture, for joining with the
// requests the trace shows through their load.RequestHeader.
type RequestLog struct {
	// Tag is the run's request tag (load.Config.RequestTag), as every
	// request's RequestHeader and the manifest's RequestTag say.
	Tag string
	// Requests are the rows read, in file order (WriteRequests sorts them
	// by Seq).
	Requests []load.RequestRecord
	// Skipped counts the rows skipped: malformed, or longer than
	// MaxRequestsLine.
	Skipped int
	// Truncated is set when the file held more than
	// load.MaxRecordedRequests rows: the rows after those were not read.
	Truncated bool
}

// WriteRequests writes requests.tsv to w: the header line "# schedscope
// requests tag=<tag>", the column names (seq, intended_unix_ns,
// sent_unix_ns, latency_ns, status, outcome; tab-separated), then one row
// per request, in the order given. tag must be a valid request tag
// (load.CheckRequestTag).
func WriteRequests(w io.Writer, tag string, reqs []load.RequestRecord) error {
	if err := load.CheckRequestTag(tag); err != nil {
		return fmt.Errorf("%s: %w", RequestsFile, err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(requestsHeader + tag + "\n" + requestsColumns + "\n")
	var row []byte
	for _, q := range reqs {
		outcome, err := q.Outcome.MarshalText()
		if err != nil {
			return fmt.Errorf("%s: seq %d: %w", RequestsFile, q.Seq, err)
		}
		row = strconv.AppendUint(row[:0], q.Seq, 10)
		row = append(row, '\t')
		row = strconv.AppendInt(row, q.IntendedUnixNs, 10)
		row = append(row, '\t')
		row = strconv.AppendInt(row, q.SentUnixNs, 10)
		row = append(row, '\t')
		row = strconv.AppendInt(row, q.LatencyNs, 10)
		row = append(row, '\t')
		row = strconv.AppendInt(row, int64(q.Status), 10)
		row = append(row, '\t')
		row = append(row, outcome...)
		row = append(row, '\n')
		if _, err := bw.Write(row); err != nil {
			return fmt.Errorf("%s: %w", RequestsFile, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", RequestsFile, err)
	}
	return nil
}

// ReadRequests reads dir's requests.tsv. At most load.MaxRecordedRequests
// rows are read (Truncated says there were more); a row longer than
// MaxRequestsLine or that does not parse is skipped and counted in
// Skipped, and the rows after it are kept. The error is set when the file
// cannot be opened or read (it wraps fs.ErrNotExist when there is none) or
// its first two lines are not requests.tsv's header; the rows read until a
// read error are returned with it.
func ReadRequests(dir string) (RequestLog, error) {
	path := filepath.Join(dir, RequestsFile)
	f, err := regular.Open(path)
	if err != nil {
		return RequestLog{}, err
	}
	defer f.Close()
	rl, err := readRequests(f, load.MaxRecordedRequests)
	if err != nil {
		return rl, fmt.Errorf("%s: %w", path, err)
	}
	return rl, nil
}

// readRequests reads requests.tsv from r, at most maxRows rows.
func readRequests(r io.Reader, maxRows int) (RequestLog, error) {
	var rl RequestLog
	br := bufio.NewReaderSize(r, 16<<10)
	rows := 0
	for n := 1; ; n++ {
		line, tooLong, complete, err := readLine(br, MaxRequestsLine)
		if err != nil {
			return rl, fmt.Errorf("line %d: %w", n, err)
		}
		end := line == nil && !tooLong && complete
		switch {
		case n == 1:
			tag, ok := strings.CutPrefix(string(line), requestsHeader)
			if end || tooLong || !ok || load.CheckRequestTag(tag) != nil {
				return rl, fmt.Errorf("line 1: want %q and a request tag", requestsHeader+"<tag>")
			}
			rl.Tag = tag
		case n == 2:
			if end || tooLong || string(line) != requestsColumns {
				return rl, errors.New("line 2: want the column names " + strings.ReplaceAll(requestsColumns, "\t", ", "))
			}
		case end:
			return rl, nil
		case rows == maxRows:
			rl.Truncated = true
			return rl, nil
		case tooLong:
			rows++
			rl.Skipped++
		case len(bytes.TrimSpace(line)) == 0:
			// A blank line holds nothing to lose.
		default:
			rows++
			q, ok := parseRequestRow(string(line))
			if !ok {
				rl.Skipped++
				break
			}
			rl.Requests = append(rl.Requests, q)
		}
		if !complete {
			return rl, nil
		}
	}
}

// parseRequestRow parses one row; ok is false when it is malformed.
func parseRequestRow(row string) (q load.RequestRecord, ok bool) {
	var f [6]string
	for i := range f {
		var more bool
		f[i], row, more = strings.Cut(row, "\t")
		if more != (i < len(f)-1) {
			return q, false // too few or too many fields
		}
	}
	var errs [6]error
	var status int64
	q.Seq, errs[0] = strconv.ParseUint(f[0], 10, 64)
	q.IntendedUnixNs, errs[1] = strconv.ParseInt(f[1], 10, 64)
	q.SentUnixNs, errs[2] = strconv.ParseInt(f[2], 10, 64)
	q.LatencyNs, errs[3] = strconv.ParseInt(f[3], 10, 64)
	status, errs[4] = strconv.ParseInt(f[4], 10, 16)
	q.Outcome, errs[5] = load.ParseOutcome(f[5])
	q.Status = int(status)
	for _, err := range errs {
		if err != nil {
			return load.RequestRecord{}, false
		}
	}
	if q.Seq == 0 || q.LatencyNs < 0 || status < 0 || status > 999 {
		return load.RequestRecord{}, false
	}
	return q, true
}
