"""The foundation every side uses: errors, limits, safe files, money, PEM keys, helper processes, metrics.

Standard library only, except the quality metrics (numpy), which the audit and the GPU side both compute.
"""
