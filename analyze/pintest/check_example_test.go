package pintest_test

import (
	"fmt"
	"log"
	"time"

	"github.com/schedscope/schedscope/analyze/pintest"
)

// Check is the measurement without a testing.TB, for tools: the verdict is
// Result.Err, the figures are in the Result.
func ExampleCheck() {
	res, err := pintest.Check(func() { time.Sleep(10 * time.Millisecond) },
		pintest.Expect("pintest_test.ExampleCheck"))
	if err != nil {
		log.Fatal(err) // could not measure
	}
	fmt.Println("control caught:", res.Control.OK())
	fmt.Println("f returned:", res.Ran.Returned, "seen:", res.Ran.Expected[0].Seen)
	fmt.Println("pins:", len(res.Pins), "verdict:", res.Err())
	// Output:
	// control caught: true
	// f returned: true seen: true
	// pins: 0 verdict: <nil>
}
