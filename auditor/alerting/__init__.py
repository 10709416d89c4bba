"""auditor.alerting"""
