print("persistence-crash-writer: not written yet")
