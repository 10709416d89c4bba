"""auditor.services"""
