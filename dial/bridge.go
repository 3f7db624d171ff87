package dial

import "context"

// Bridge connects two calls' audio inside agentd: each frame one side
// hears is written to the other, and digits are passed on, until ctx
// ends or one side's media ends. a is read from aIn (a caller whose
// Media another goroutine already reads) or, when aIn is nil, from
// a.Read. It returns once both directions have stopped.
func Bridge(ctx context.Context, a Media, aIn <-chan Input, b Media) {
	// 40 ms of silence ahead of each side's queue: a frame read on one
	// call's tick and written just after the other's tick still plays in
	// time, instead of a gap (a click) once and a frame late ever after.
	cushion := make([]int16, 2*FrameSamples)
	a.Write(cushion)
	b.Write(cushion)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { // b to a
		defer close(done)
		defer cancel()
		for {
			in, err := b.Read(ctx)
			if err != nil {
				return
			}
			pass(ctx, a, in)
		}
	}()
	for { // a to b
		var in Input
		if aIn != nil {
			var ok bool
			select {
			case in, ok = <-aIn:
				if !ok {
					cancel()
					<-done
					return
				}
			case <-ctx.Done():
				<-done
				return
			}
		} else {
			var err error
			if in, err = a.Read(ctx); err != nil {
				cancel()
				<-done
				return
			}
		}
		pass(ctx, b, in)
	}
}

// pass writes one input of the other side: its audio, or its digit.
func pass(ctx context.Context, to Media, in Input) {
	switch {
	case in.PCM != nil:
		to.Write(in.PCM)
	case in.Digit != 0:
		go to.SendDigits(ctx, string(in.Digit))
	}
}
