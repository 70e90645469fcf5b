"""The foundation every side uses: errors, limits, safe file reading and writing, helper processes."""
