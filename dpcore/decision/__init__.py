"""A data owner's decision: the ε advisor and the report they take away.
"""
