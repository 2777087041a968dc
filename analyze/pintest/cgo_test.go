//go:build cgo

package pintest_test

// cgoBuilt says the test binary, and so the fixture in it, was built with
// cgo: the fixture's /pinned?how=cgo can call C.
const cgoBuilt = true
