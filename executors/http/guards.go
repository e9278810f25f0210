package httpexec

// guardCacheSize is how many allowlists keep a guard and connection pool.
const guardCacheSize = 32
