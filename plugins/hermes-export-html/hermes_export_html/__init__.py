"""Export sessions as one self-contained HTML file."""
