// Package rundir owns the formats of schedscope's three kinds of directory,
// the one contract between the floor that measures and the floor that
// explains:
//
//   - A run directory (`schedscope run`, each model of `schedscope demo`):
//     manifest.json (Manifest: what ran, where, how it ended, what each
//     file holds), results.json (the load generator's load.Result),
//     load.hlog (its HdrHistogram interval log), metrics.jsonl (one
//     MetricsLine per poll of the target: the raw agent snapshot and /proc
//     counters, and the figures derived from them live), trace.out and the
//     *.pb.gz profiles, requests.tsv (the generator's record of each
//     request around the trace, RequestLog, for joining with the requests
//     the trace shows), then analysis.json (Analysis) and summary.txt,
//     which package derive makes from the others alone.
//   - A sweep directory (`schedscope sweep`): sweep.json (SweepPlan) and
//     steps/*.json (one SweepStep per finished step).
//   - A repeat directory (`schedscope run --repeat N`): repeat.json
//     (Repeat) and run-01 ... run-NN, one run directory each, the samples
//     of one side of `schedscope compare`.
//
// Writers (Create, Open, Writer, WriteJSONFile) write whole files through
// WriteFileAtomic (a temporary file in the same directory, synced, then
// renamed) and append lines with single writes, so a reader never sees
// half a document, a full disk leaves no half-written file, and a killed
// run leaves whole lines. A file that could not be written is named in
// every manifest written after it, which then says StatusIncomplete rather
// than StatusComplete. Readers (ReadRun, ReadSweep, ReadRepeat,
// ReadMetrics, ReadRequests, ReadHLog, ReadFile, FindTrace) are the only
// code that reads these files.
// DirKindOf tells the kinds of directory apart, so no command writes into a
// directory of another kind (CheckNewRunDir).
//
// Readers read regular files only (package regular), so a named pipe never
// blocks them, and a file they read whole within its bound (MaxFileBytes),
// so a corrupt one of gigabytes is refused before it is allocated.
//
// Kind is the one taxonomy of conclusions (findings, ceilings, live notes,
// the load generator's verdicts, a sweep's limits): code selects on it,
// never on the prose.
//
// The directories are meant to be shared: the writers redact every
// secret in what they record of a command line or a target (token flags'
// values, credential headers, URL and DSN passwords; see
// Manifest.Redacted, SweepPlan.Redacted and package redact), and the
// readers redact again what a directory written before that holds.
//
// The package imports only the leaves whose types the files hold (analyze,
// collect/load, collect/agent) and internal/redact; internal/layout's test
// keeps it so.
package rundir
