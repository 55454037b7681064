"""Reading a transcript: finding the answer's JSON in it, decoding it, and locating JSON pointers in its text."""
