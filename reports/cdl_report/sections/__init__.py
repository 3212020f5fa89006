"""One module per section of the report, in the order they appear. Each has a function add(doc, ...)
that writes its section and returns what later sections, the claims and the README table need."""
