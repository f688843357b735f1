//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package h1

import (
	"net"
	"syscall"
)

// alive looks at an idle connection without waiting: closed by the
// server (end of stream, an error) it is not alive; bytes waiting on a
// plain connection are a response nobody asked for, so it is not alive
// either; under TLS they may be a session ticket, so it is.
func alive(nc net.Conn, isTLS bool) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
			live = true
		case rerr != nil || n == 0:
			live = false
		default:
			live = isTLS
		}
		return true
	})
	return err == nil && live
}
