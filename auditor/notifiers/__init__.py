"""auditor.notifiers"""
