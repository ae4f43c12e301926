//go:build !amd64

package rawsock

import "sync/atomic"

// storeRelease writes a ring frame's status word v at p after everything written to the
// frame before it. Where stores may be reordered (arm, arm64) sync/atomic's store is the
// release store (STLR on arm64, DMB-fenced on arm).
func storeRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
