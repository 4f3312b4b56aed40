// Placeholder: the load generator is being written.
print("rtdb-loadgen: not written yet")
