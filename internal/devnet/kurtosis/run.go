package kurtosis

import (
	"context"
	"fmt"
	"io"
	"strings"

	rpc "github.com/kurtosis-tech/kurtosis/api/golang/core/kurtosis_core_rpc_api_bindings"
)

// runResult is what a finished, successful run yields.
type runResult struct {
	// Output is RunFinishedEvent.SerializedOutput: the JSON of run()'s value.
	Output string
	// Instructions counts executed instructions, for the summary line.
	Instructions int
}

// consumeRun reads the response stream of one Starlark run to its end,
// printing progress to log, and checks all four failure channels: the
// stream (a run must end in a RunFinishedEvent), interpretation errors,
// validation errors and execution errors. Only a RunFinishedEvent with
// IsRunSuccessful and no error line is success. When ctx ends first, it
// cancels the run, drains the stream in the background and returns ctx's
// error (its cause, when it was cancelled with one).
func consumeRun(ctx context.Context, lines <-chan *rpc.StarlarkRunResponseLine, cancelRun context.CancelFunc, log io.Writer) (runResult, error) {
	var (
		res         runResult
		interp      string
		validations []string
		exec        string
		finished    *rpc.StarlarkRunFinishedEvent
		lastStep    string
	)
	for {
		var line *rpc.StarlarkRunResponseLine
		var open bool
		select {
		case <-ctx.Done():
			cancelRun()
			go func() {
				for range lines { //nolint:revive // drain so the SDK's reader goroutine can exit
				}
			}()
			return runResult{}, fmt.Errorf("run package: %w", context.Cause(ctx))
		case line, open = <-lines:
		}
		if !open {
			break
		}
		switch {
		case line.GetInstruction() != nil:
			in := line.GetInstruction()
			res.Instructions++
			desc := in.GetDescription()
			if desc == "" {
				desc = in.GetInstructionName()
			}
			fmt.Fprintf(log, "  > %s\n", oneLine(desc, 160))
		case line.GetProgressInfo() != nil:
			p := line.GetProgressInfo()
			step := strings.Join(p.GetCurrentStepInfo(), " ")
			if step != lastStep {
				lastStep = step
				if p.GetTotalSteps() > 0 {
					fmt.Fprintf(log, "[%d/%d] %s\n", p.GetCurrentStepNumber(), p.GetTotalSteps(), step)
				} else {
					fmt.Fprintf(log, "%s\n", step)
				}
			}
		case line.GetInfo() != nil:
			fmt.Fprintf(log, "info: %s\n", line.GetInfo().GetInfoMessage())
		case line.GetWarning() != nil:
			fmt.Fprintf(log, "warning: %s\n", line.GetWarning().GetWarningMessage())
		case line.GetInstructionResult() != nil:
			if r := line.GetInstructionResult().GetSerializedInstructionResult(); r != "" {
				fmt.Fprintf(log, "    %s\n", oneLine(r, 160))
			}
		case line.GetError() != nil:
			e := line.GetError()
			switch {
			case e.GetInterpretationError() != nil:
				interp = e.GetInterpretationError().GetErrorMessage()
			case e.GetValidationError() != nil:
				validations = append(validations, e.GetValidationError().GetErrorMessage())
			case e.GetExecutionError() != nil:
				exec = e.GetExecutionError().GetErrorMessage()
			}
		case line.GetRunFinishedEvent() != nil:
			finished = line.GetRunFinishedEvent()
		}
	}
	switch {
	case interp != "":
		return runResult{}, fmt.Errorf("run package: %w: %s", ErrInterpretation, interp)
	case len(validations) > 0:
		return runResult{}, fmt.Errorf("run package: %w (%d): %s", ErrValidation, len(validations), strings.Join(validations, "; "))
	case exec != "":
		return runResult{}, fmt.Errorf("run package: %w: %s", ErrExecution, exec)
	case finished == nil:
		return runResult{}, fmt.Errorf("run package: %w (after %d instructions)", ErrStreamEnded, res.Instructions)
	case !finished.GetIsRunSuccessful():
		return runResult{}, fmt.Errorf("run package: %w (RunFinishedEvent reports failure, no error line)", ErrRunFailed)
	}
	res.Output = finished.GetSerializedOutput()
	fmt.Fprintf(log, "run finished: %d instructions", res.Instructions)
	if d := finished.GetTotalExecutionDuration(); d != nil {
		fmt.Fprintf(log, " in %v", d.AsDuration().Round(1e6))
	}
	fmt.Fprintln(log)
	return res, nil
}

// oneLine flattens s to a single line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
