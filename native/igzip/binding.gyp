{
  "targets": [
    {
      "target_name": "igzip",
      "sources": ["igzip.c"],
      "libraries": ["-lisal"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
