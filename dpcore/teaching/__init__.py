"""The words and stories the dashboard teaches with: the ε explainer, the verdict bands and deployments,
the lesson from page to page, and the glossary.
"""
