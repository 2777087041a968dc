package load

import (
	"golang.org/x/sys/unix"
)

// readClockSync asks the kernel (adjtimex, read only) how well a time
// daemon keeps this host's clock.
func readClockSync() ClockSync {
	var tx unix.Timex // Modes 0: read, change nothing
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return ClockSync{Source: "adjtimex: " + err.Error()}
	}
	return ClockSync{
		Source:       "adjtimex",
		Synchronized: state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0,
		EstErrorMS:   float64(tx.Esterror) / 1000,
		MaxErrorMS:   float64(tx.Maxerror) / 1000,
	}
}
