"""auditor.ingestion"""
