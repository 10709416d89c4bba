"""auditor.web"""
