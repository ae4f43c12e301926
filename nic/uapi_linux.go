package nic

// Constants from include/uapi/linux/ethtool.h that golang.org/x/sys/unix does not export.
const (
	ethGStringLen = 32 // ETH_GSTRING_LEN
	ethSSStats    = 1  // ETH_SS_STATS
	ethSSFeatures = 4  // ETH_SS_FEATURES
	autonegEnable = 1  // AUTONEG_ENABLE
	duplexHalf    = 0  // DUPLEX_HALF
	duplexFull    = 1  // DUPLEX_FULL
)
