"""Export sessions as Markdown (md) and Quarto (qmd) documents."""
