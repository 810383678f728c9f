package events

// wakeCause says what woke the relay.
type wakeCause int

const (
	wakeStart  wakeCause = iota // Run started or the listener (re)connected
	wakeNotify                  // a NOTIFY on Channel
	wakePoll                    // the fallback poll timer
	wakeTrail                   // NotifySpacing after a notify, then 4x as far each time
)
