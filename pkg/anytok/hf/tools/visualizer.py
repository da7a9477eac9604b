"""`tokenizers.tools.EncodingVisualizer`: a text's tokens as HTML, coloured by their offsets.

How data flows: the text is encoded, every character gets the tokens whose offsets cover it
(and the annotations covering it), and runs of characters with the same tokens become spans.
"""

from __future__ import annotations

import html

__all__ = ["Annotation", "EncodingVisualizer"]


class Annotation:
    """A labelled character span of the text."""

    def __init__(self, start: int, end: int, label: str):
        self.start = start
        self.end = end
        self.label = label


class EncodingVisualizer:
    """Renders the tokens of a text as HTML (offsets show which characters each token covers)."""

    def __init__(self, tokenizer, default_to_notebook: bool = True, annotation_converter=None):
        self.tokenizer = tokenizer
        self.default_to_notebook = default_to_notebook
        self.annotation_coverter = annotation_converter

    def __call__(self, text: str, annotations=None, default_to_notebook=None):
        annotations = list(annotations or [])
        if self.annotation_coverter is not None:
            annotations = [self.annotation_coverter(a) for a in annotations]
        enc = self.tokenizer.encode(text)
        owner = [None] * len(text)
        for i, (s, e) in enumerate(enc.offsets):
            for c in range(s, min(e, len(text))):
                owner[c] = i
        parts = []
        i = 0
        while i < len(text):
            j = i
            while j < len(text) and owner[j] == owner[i]:
                j += 1
            tok = owner[i]
            cls = "non-token" if tok is None else ("even-token" if tok % 2 == 0 else "odd-token")
            parts.append(f'<span class="token {cls}">{html.escape(text[i:j])}</span>')
            i = j
        out = '<div class="tokenized-text">' + "".join(parts) + "</div>"
        notebook = self.default_to_notebook if default_to_notebook is None else default_to_notebook
        if notebook:
            try:
                from IPython.core.display import HTML, display

                display(HTML(out))
                return None
            except ImportError:
                pass
        return out
