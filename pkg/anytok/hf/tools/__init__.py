"""`tokenizers.tools`: EncodingVisualizer and Annotation."""

from .visualizer import Annotation, EncodingVisualizer

__all__ = ["Annotation", "EncodingVisualizer"]
