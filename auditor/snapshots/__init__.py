"""auditor.snapshots"""
