//! Vectorized execution: column batches, filter and aggregate kernels, the custom scan
//! nodes and their EXPLAIN output. Arrives with the executor issues.
