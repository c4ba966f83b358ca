"""Stands for the vllm.config package, whose modules build the engine's
configuration over torch. The protocol and sampling modules name these classes
only in signatures of methods the tool parsers never call."""


class ModelConfig:
    pass


class SpeculativeConfig:
    pass


class StructuredOutputsConfig:
    pass


class VllmConfig:
    pass
