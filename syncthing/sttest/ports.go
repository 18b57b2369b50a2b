package sttest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// errPortTaken reports that Syncthing could not bind one of the ports it
// was given: another process took it between the pick and the bind.
var errPortTaken = errors.New("port taken")

// lowestPort is the lowest port picked: below it live many well-known
// services.
const lowestPort = 10000

// ephemeralRangeFile holds the range the kernel picks ports from for
// `:0` listeners and outgoing connections.
const ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

var (
	portsMu sync.Mutex
	// portsGiven holds every port handed out in this process, so two
	// nodes of one test binary never get the same one.
	portsGiven = map[int]bool{}
)

// pickPorts returns n distinct ports that were free on 127.0.0.1, chosen
// at random outside the kernel's ephemeral range. A port the kernel hands
// out for `:0` (as the old pick did) is what every other test process
// gets too, and any outgoing connection may take it; a random port
// outside that range is taken only by another process picking the same
// one at the same moment, which start-up detects and retries.
func pickPorts(n int) ([]int, error) {
	lo, hi := ephemeralRange()
	var candidates [][2]int // inclusive ranges
	if lo-1 >= lowestPort {
		candidates = append(candidates, [2]int{lowestPort, lo - 1})
	}
	if hi+1 <= 65535 {
		candidates = append(candidates, [2]int{max(hi+1, lowestPort), 65535})
	}
	total := 0
	for _, c := range candidates {
		total += c[1] - c[0] + 1
	}
	if total < n {
		return nil, fmt.Errorf("no ports outside the ephemeral range %d-%d", lo, hi)
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("find %d free ports outside %d-%d: gave up after %d tries", n, lo, hi, tries)
		}
		k := rand.IntN(total)
		port := 0
		for _, c := range candidates {
			if size := c[1] - c[0] + 1; k < size {
				port = c[0] + k
				break
			} else {
				k -= size
			}
		}
		if portsGiven[port] || !portFree(port) {
			continue
		}
		portsGiven[port] = true
		ports = append(ports, port)
	}
	return ports, nil
}

// portFree reports whether port can be listened on at 127.0.0.1 now.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// ephemeralRange returns the kernel's ephemeral port range, or
// 32768-65535 (which covers the Linux default and the IANA range BSDs
// and macOS use) when it cannot be read.
func ephemeralRange() (lo, hi int) {
	lo, hi = 32768, 65535
	data, err := os.ReadFile(ephemeralRangeFile)
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(data))
	if len(f) != 2 {
		return lo, hi
	}
	l, err1 := strconv.Atoi(f[0])
	h, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || l > h {
		return lo, hi
	}
	return l, h
}
