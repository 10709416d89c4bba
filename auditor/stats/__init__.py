"""auditor.stats"""
