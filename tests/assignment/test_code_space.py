

def test_assignment_docstring_examples_run():
    import doctest

    from keras_subembed.assignment import clustered
    from keras_subembed.assignment import code_space
    from keras_subembed.assignment import digits
    from keras_subembed.assignment import random_codes

    for module in (clustered, code_space, digits, random_codes):
        result = doctest.testmod(module, extraglobs={"np": np})
        assert result.attempted > 0 and result.failed == 0, module.__name__
