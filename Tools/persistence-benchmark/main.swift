print("persistence-benchmark: not written yet")
