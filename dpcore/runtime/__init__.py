"""Running dpcore on a machine or a shared server: the work budget, the classroom's shared runs, a remote
cluster, and warnings caught per thread.
"""
