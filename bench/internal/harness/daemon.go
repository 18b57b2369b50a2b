package harness

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// Daemon is a running `memminer run` process.
type Daemon struct {
	// Client talks to the daemon's control socket.
	Client  *daemonclient.Client
	cmd     *exec.Cmd
	stopped bool
	res     error
}

// StartDaemon starts `memminer run --hive hive --log-level warn` with env,
// which names palaceDir as the palace (see Env); its stderr goes to stderr
// (nil: discarded).
func StartDaemon(ctx context.Context, bin, hive, palaceDir string, env []string, stderr io.Writer) (*Daemon, error) {
	cmd := exec.CommandContext(ctx, bin, "run", "--hive", hive, "--log-level", "warn")
	cmd.Env = env
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	return &Daemon{Client: daemonclient.NewClient(palaceDir), cmd: cmd}, nil
}

// WaitIdle waits, for at most limit, until the daemon has nothing left to
// do (see the function WaitIdle).
func (d *Daemon) WaitIdle(ctx context.Context, limit time.Duration) (api.Status, error) {
	return WaitIdle(ctx, d.Client, limit)
}

// Pid is the daemon's process id.
func (d *Daemon) Pid() int { return d.cmd.Process.Pid }

// Stop sends SIGTERM and waits for the daemon to exit, reporting how it
// exited. It may be called more than once; later calls report the same.
func (d *Daemon) Stop() error {
	if !d.stopped {
		d.stopped = true
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		if err := d.cmd.Wait(); err != nil {
			d.res = fmt.Errorf("daemon: %w", err)
		}
	}
	return d.res
}

// pollEvery is how often WaitIdle asks the daemon.
const pollEvery = 10 * time.Millisecond

// WaitIdle polls the daemon's status until it answers and has nothing left
// to do (it has scanned the hive and mined all of it), for at most limit
// or until parent ends, and returns that status.
func WaitIdle(parent context.Context, cl *daemonclient.Client, limit time.Duration) (api.Status, error) {
	ctx, cancel := context.WithTimeout(parent, limit)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		st, err := cl.Status(ctx)
		if err == nil && st.Daemon.Idle() {
			return st, nil
		}
		select {
		case <-ctx.Done():
			if err := parent.Err(); err != nil {
				return api.Status{}, err
			}
			return api.Status{}, fmt.Errorf("the daemon did not become idle within %s", limit)
		case <-tick.C:
		}
	}
}
