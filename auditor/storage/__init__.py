"""auditor.storage"""
