package conflicts

import (
	"fmt"
	"time"
)

// Status is the component's part of `memminer status --json`, under
// daemon.components.conflicts. Every key is always present; what does not
// apply is null.
type Status struct {
	// Open is the number of open conflicts.
	Open int `json:"open"`
	// Registry is the registry file.
	Registry string `json:"registry"`
	// RegistryError is the last failure to read or save it.
	RegistryError *string `json:"registry_error"`
	// LastScan is when the hive was last walked.
	LastScan time.Time `json:"last_scan"`
	// ScanError is why the last walk was incomplete.
	ScanError *string `json:"scan_error"`
	// Syncthing is the state of the event stream.
	Syncthing SyncthingStatus `json:"syncthing"`
	// Alerts counts deliveries of commands and webhooks.
	Alerts AlertStatus `json:"alerts"`
	// AutoMerge is the automatic merge's state.
	AutoMerge AutoMergeStatus `json:"auto_merge"`
}

// AutoMergeStatus counts the open copies the automatic merge could not
// merge at once: those it retries, and those left to a person.
type AutoMergeStatus struct {
	// Enabled reports whether the daemon merges copies itself (AutoMerge).
	Enabled     bool `json:"enabled"`
	Retrying    int  `json:"retrying"`
	NeedsPerson int  `json:"needs_person"`
}

// SyncthingStatus is the state of the Syncthing event stream.
type SyncthingStatus struct {
	// Enabled reports whether a Syncthing is watched.
	Enabled bool `json:"enabled"`
	// Reason says why not, when not enabled.
	Reason *string `json:"reason"`
	// URL is Syncthing's address, when one is watched.
	URL *string `json:"url"`
	// Connected reports whether the last request to Syncthing worked.
	Connected bool `json:"connected"`
	// LastError is Syncthing's last failure (never holds the API key).
	LastError *string `json:"last_error"`
	// LastErrorTime is when it happened.
	LastErrorTime *time.Time `json:"last_error_time"`
	// Restarts counts Syncthing restarts noticed.
	Restarts int `json:"restarts"`
	// Events counts conflict events received.
	Events int `json:"events"`
}

// AlertStatus counts alert deliveries (command and webhook, per conflict).
type AlertStatus struct {
	// Command reports whether an --on-conflict command is set.
	Command bool `json:"command"`
	// Webhook is the webhook's scheme and host, if one is set.
	Webhook *string `json:"webhook"`
	// Sent and Failed count conflicts whose alerts went out, or failed.
	Sent   int `json:"sent"`
	Failed int `json:"failed"`
	// Pending counts conflicts whose alerts wait for delivery.
	Pending int `json:"pending"`
	// LastError is the last delivery failure.
	LastError *string `json:"last_error"`
}

// Status implements daemon.StatusReporter.
func (c *Component) Status() any { return c.Snapshot() }

// Snapshot returns the component's state.
func (c *Component) Snapshot() Status {
	c.mu.Lock()
	st := Status{LastScan: c.lastScan, ScanError: optional(c.scanErr), RegistryError: optional(c.loadErr)}
	reg, w := c.reg, c.watcher
	c.mu.Unlock()
	st.AutoMerge.Enabled = c.opts.AutoMerge
	if reg != nil {
		st.Open = reg.count()
		c.mu.Lock()
		for p, s := range c.merging {
			switch {
			case !reg.has(p):
			case s.State == AutoMergeRetrying:
				st.AutoMerge.Retrying++
			default:
				st.AutoMerge.NeedsPerson++
			}
		}
		c.mu.Unlock()
		st.Registry = reg.path
		if e := reg.lastSaveError(); e != "" {
			st.RegistryError = &e
		}
	}
	if c.opts.Syncthing == nil {
		reason := c.opts.SyncthingOff
		if reason == "" {
			reason = "no Syncthing configured"
		}
		st.Syncthing.Reason = &reason
	} else {
		st.Syncthing.Enabled = true
		st.Syncthing.URL = new(c.opts.Syncthing.BaseURL())
	}
	if w != nil {
		ws := w.Status()
		st.Syncthing.Connected = ws.Connected
		st.Syncthing.Restarts = ws.Restarts
		st.Syncthing.Events = ws.Delivered
		if ws.LastError != nil {
			st.Syncthing.LastError = new(ws.LastError.Error())
			t := ws.LastErrorTime.UTC()
			st.Syncthing.LastErrorTime = &t
		}
	}
	sent, failed, pending, lastErr := c.alerts.stats()
	st.Alerts = AlertStatus{Command: len(c.opts.Command) > 0, Sent: sent, Failed: failed, Pending: pending, LastError: optional(lastErr)}
	if c.opts.Webhook != "" {
		st.Alerts.Webhook = new(redactURL(c.opts.Webhook))
	}
	return st
}

// String describes the component for logs without secrets.
func (c *Component) String() string {
	return fmt.Sprintf("conflicts{syncthing: %t, command: %t, webhook: %t}", c.opts.Syncthing != nil, len(c.opts.Command) > 0, c.opts.Webhook != "")
}

// optional is s for a JSON key that is null when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
