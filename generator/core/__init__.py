"""The foundation every side uses: errors, limits, safe files, money, PEM keys, helper processes, metrics, the
bundle ID and the registry of finding and problem codes.

Standard library only, except the quality metrics (numpy), which the audit and the GPU side both compute.
"""
