"""auditor.api"""
