"""The repeat planner: which items to show a rater again."""
