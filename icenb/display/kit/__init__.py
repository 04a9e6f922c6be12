"""The display toolkit every renderer draws with: HTML and text building blocks (``html``,
``text``, ``fmt``), DOT graphs and their SVG rendering (``dot``, ``graph``, ``render``) and
``side_by_side`` layouts. Draws no model object of its own."""
